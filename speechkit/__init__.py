"""speechkit: run open-source speech cascades over meeting audio and score them."""
__version__ = "0.1.0"
