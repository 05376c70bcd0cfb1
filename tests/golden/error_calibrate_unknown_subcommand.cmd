calibrate fitt --base dgx-h100
