list hardware
