regress --suite /nonexistent.json
