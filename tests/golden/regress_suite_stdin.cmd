regress --suite -
