"""Secrets masked and scanned in every encoding an attacker would use (leaks.py): one function for
the adapters and the bot alike."""
