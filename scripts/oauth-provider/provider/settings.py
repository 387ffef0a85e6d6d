"""A django-oauth-toolkit authorization server for the integration tests, started by scripts/servers.sh.

TEST ONLY: every request is made by the test user (provider.middleware.TestUserMiddleware), there is no CSRF
protection, and the secrets are fixed. Never deploy it.

Environment:
    OAUTH_PROVIDER_RUN_DIR   folder for this run's SQLite database and OpenID Connect signing key (required)
    OAUTH_PROVIDER_URL       the server's own URL, for the device grant's verification_uri (default
                             http://127.0.0.1:8000)
    OIDC_TOKEN_LIFETIME      access and ID token lifetime in seconds (default 3600)
    OAUTH_DEVICE_INTERVAL    the device grant's polling interval in seconds (default 5, RFC 8628's)
"""

import os
from pathlib import Path

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

RUN_DIR = Path(os.environ["OAUTH_PROVIDER_RUN_DIR"])
RUN_DIR.mkdir(parents=True, exist_ok=True)
BASE_URL = os.environ.get("OAUTH_PROVIDER_URL", "http://127.0.0.1:8000").rstrip("/")
TOKEN_LIFETIME = int(os.environ.get("OIDC_TOKEN_LIFETIME") or 3600)
DEVICE_INTERVAL = int(os.environ.get("OAUTH_DEVICE_INTERVAL") or 5)

# oauthlib refuses plain http unless told otherwise; the server listens on loopback only.
os.environ["OAUTHLIB_INSECURE_TRANSPORT"] = "1"


def _signing_key() -> str:
    """This run's RSA key for ID tokens (RS256): made by the first process that needs it, kept in RUN_DIR."""
    path = RUN_DIR / "oidc-rsa.pem"
    if not path.exists():
        key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        pem = key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
        temporary = path.with_suffix(".tmp-%d" % os.getpid())
        temporary.write_bytes(pem)
        temporary.chmod(0o600)
        temporary.replace(path)
    return path.read_text()


SECRET_KEY = "test-only-not-a-secret"
DEBUG = False
ALLOWED_HOSTS = ["127.0.0.1", "localhost"]
ROOT_URLCONF = "provider.urls"
WSGI_APPLICATION = "provider.wsgi.application"
USE_TZ = True
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

INSTALLED_APPS = [
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "oauth2_provider",
    "provider",
]

MIDDLEWARE = [
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "provider.middleware.TestUserMiddleware",
]

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "APP_DIRS": True,
        "OPTIONS": {"context_processors": ["django.template.context_processors.request"]},
    }
]

DATABASES = {
    "default": {
        "ENGINE": "django.db.backends.sqlite3",
        "NAME": RUN_DIR / "db.sqlite3",
        # Concurrent token requests from the tests' threads wait for the write lock rather than fail.
        "OPTIONS": {"timeout": 30, "transaction_mode": "IMMEDIATE"},
    }
}

PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]  # fast; the secrets are fixed anyway

LOGGING = {
    "version": 1,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "loggers": {
        "oauth2_provider": {"handlers": ["console"], "level": "WARNING"},
        "django.request": {"handlers": ["console"], "level": "ERROR"},  # tracebacks of 500s, in the log
    },
}

OAUTH2_PROVIDER = {
    "PKCE_REQUIRED": True,
    "ROTATE_REFRESH_TOKEN": True,
    "REFRESH_TOKEN_GRACE_PERIOD_SECONDS": 0,
    "ACCESS_TOKEN_EXPIRE_SECONDS": TOKEN_LIFETIME,
    "ID_TOKEN_EXPIRE_SECONDS": TOKEN_LIFETIME,
    "ALLOWED_REDIRECT_URI_SCHEMES": ["http", "https", "com.example.app"],
    "OIDC_ENABLED": True,
    "OIDC_RSA_PRIVATE_KEY": _signing_key(),
    "OIDC_RP_INITIATED_LOGOUT_ENABLED": True,
    "OIDC_RP_INITIATED_LOGOUT_ALWAYS_PROMPT": False,
    "SCOPES": {
        "openid": "OpenID Connect",
        "profile": "Profile",
        "read": "Reading scope",
        "write": "Writing scope",
        "reports.read": "Reading reports",
        "introspection": "Introspecting tokens",
    },
    "DEFAULT_SCOPES": ["read"],
    "DEVICE_FLOW_INTERVAL": DEVICE_INTERVAL,
    "OAUTH_DEVICE_VERIFICATION_URI": BASE_URL + "/o/device/",
    "OAUTH_DEVICE_VERIFICATION_URI_COMPLETE": lambda user_code: BASE_URL + "/o/device/?user_code=" + user_code,
}
