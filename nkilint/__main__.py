"""``python -m nkilint``.

``python -m`` puts the current directory first on ``sys.path``. Inside an
untrusted checkout that would let its modules shadow nkilint's imports and
let a ``*.dist-info`` directory there register a rule pack (entry points are
read from every ``sys.path`` entry), i.e. run the checkout's code. The
current directory is dropped before anything else is imported, so
``python -m nkilint`` loads exactly what the ``nkilint`` script loads.
"""

import os
import sys


def _drop_cwd_from_path() -> None:
    # Only the entry ``-m`` inserted (the first one); a directory a .pth file
    # or PYTHONPATH put on the path later on is the user's choice.
    if not sys.path:
        return
    first = sys.path[0]
    if first in ("", ".") or os.path.realpath(first) == os.path.realpath(os.getcwd()):
        del sys.path[0]


_drop_cwd_from_path()

if __name__ == "__main__":  # pragma: no cover
    try:
        from nkilint.cli import main  # after the sys.path fix above
    except KeyboardInterrupt:  # Ctrl-C while starting: no traceback, the usual code
        sys.exit(130)
    main()
