#!/usr/bin/env python
"""django-oauth-toolkit as the integration tests' authorization server: see provider/settings.py."""
import os
import sys

if __name__ == "__main__":
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "provider.settings")
    from django.core.management import execute_from_command_line

    execute_from_command_line(sys.argv)
