"""Typed tool parameters: ``declaration`` (``Params``, ``param``) explains them; ``kinds`` holds
what each annotation means, ``fields`` the resolved class and ``problems`` what a failed
check reports.
"""
