regress --golden -
