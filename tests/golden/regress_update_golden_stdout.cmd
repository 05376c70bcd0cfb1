regress --update --golden -
