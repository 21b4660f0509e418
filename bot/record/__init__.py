"""What a run leaves: the recorder, the provenance, redaction and defanging."""
