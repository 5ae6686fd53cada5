"""scarbook/models: the records and their JSON shapes."""
