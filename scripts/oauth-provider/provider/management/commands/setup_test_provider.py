"""Migrates this run's database and creates the test user and the clients the integration tests use:

    pkce-app   public, authorization code with PKCE (S256 required), redirect URI com.example.app:/oauth/callback,
               OpenID Connect (RS256 ID tokens), refresh tokens rotated
    worker     confidential (secret "worker-secret"), client credentials
    tv-app     public, device authorization grant (RFC 8628)

Every client skips the consent screen. Run once per run folder, before the server starts.
"""

from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.core.management.base import BaseCommand
from oauth2_provider.models import get_application_model

from provider.middleware import TEST_USERNAME

CLIENTS = [
    dict(
        client_id="pkce-app",
        name="PKCE app",
        client_type="public",
        authorization_grant_type="authorization-code",
        redirect_uris="com.example.app:/oauth/callback",
        algorithm="RS256",
    ),
    dict(
        client_id="worker",
        client_secret="worker-secret",
        name="Reports worker",
        client_type="confidential",
        authorization_grant_type="client-credentials",
    ),
    dict(
        client_id="tv-app",
        name="TV app",
        client_type="public",
        authorization_grant_type="urn:ietf:params:oauth:grant-type:device_code",
    ),
]


class Command(BaseCommand):
    help = "Migrate, and create the test user and the test clients."

    def handle(self, *args, **options):
        call_command("migrate", interactive=False, verbosity=0)
        user, _ = get_user_model().objects.get_or_create(username=TEST_USERNAME)
        Application = get_application_model()
        for client in CLIENTS:
            if not Application.objects.filter(client_id=client["client_id"]).exists():
                Application.objects.create(user=user, skip_authorization=True, **client)
        self.stdout.write("test provider ready: user %s, clients %s" % (
            TEST_USERNAME, ", ".join(c["client_id"] for c in CLIENTS)))
