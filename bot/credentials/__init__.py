"""Provider credentials: resolution by scope and the encrypted vault."""
