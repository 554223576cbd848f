"""Other libraries' model formats: LightGBM's text model, read and written."""
