"""One job: its context, the pipeline, the episode, the answer."""
