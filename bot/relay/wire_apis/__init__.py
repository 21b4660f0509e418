"""The wire APIs the model relay speaks, one module each (bot/relay/wire_api.py reads them)."""
