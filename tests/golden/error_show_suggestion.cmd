show lama8b
