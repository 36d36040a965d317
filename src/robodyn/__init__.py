"""robodyn."""
