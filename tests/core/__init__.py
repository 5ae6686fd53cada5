"""The package root (models, errors, text, config, project) and the layout of the whole package."""
