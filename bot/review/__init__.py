"""Pull-request reviews (docs/reviews.md): the diff's commentable lines, the findings an agent adds
through the bridge, the merge of several agents' findings, and the one GitHub review they become."""
