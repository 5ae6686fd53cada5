"""Small widgets and renderers shared by the screens."""
