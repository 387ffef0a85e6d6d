"""The WSGI application gunicorn serves (scripts/servers.sh: `gunicorn provider.wsgi:application`)."""
import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "provider.settings")
application = get_wsgi_application()
