show dgx-h100
