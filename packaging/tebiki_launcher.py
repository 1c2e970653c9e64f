"""Entry script of the PyInstaller bundle: `app.main:main`, like `tebiki` and `python -m app`."""

from app.main import main

if __name__ == "__main__":
    raise SystemExit(main())
