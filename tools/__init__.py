"""Tools that build what the extension ships (the embedded teacher and judge); not shipped themselves."""
