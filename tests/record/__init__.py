"""scarbook/record: the model-call recorder and its proxy."""
