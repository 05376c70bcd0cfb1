regress --rtol -1
