"""Classic BPE as published trainers run it (the named recipes, free schemes) and WordPiece."""
