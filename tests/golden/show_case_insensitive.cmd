show H100
