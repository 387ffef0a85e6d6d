"""A protected resource (the tests' way of asking the server whether it still accepts an access token) and a TEST ONLY
probe that tells a revoked token from an expired one."""

import hashlib

from django.http import JsonResponse
from oauth2_provider.models import get_access_token_model
from oauth2_provider.views.generic import ProtectedResourceView
from oauth2_provider.views.mixins import ProtectedResourceMetadataMixin


class MeView(ProtectedResourceMetadataMixin, ProtectedResourceView):
    """GET /api/me with a valid bearer token: 200 and the token's user, client and scopes. Without one, DOT's RFC 6750
    answer: 401 with `WWW-Authenticate: Bearer …` (the metadata mixin; DOT's plain views answer a bare 403)."""

    def get(self, request, *args, **kwargs):
        bearer = request.headers["Authorization"].split(" ", 1)[1]
        checksum = hashlib.sha256(bearer.encode("utf-8")).hexdigest()
        token = get_access_token_model().objects.select_related("application").get(token_checksum=checksum)
        owner = request.resource_owner
        return JsonResponse(
            {"user": owner.username if owner else None, "client_id": token.application.client_id, "scope": token.scope}
        )


def token_state(request):
    """TEST ONLY: GET /api/token-state?checksum=<SHA-256 of the token, hex>: whether the server still stores the access
    token. Revocation deletes the row and expiry keeps it (until `cleartokens`, which nothing here runs), so a token that
    is gone after a reset was revoked, however long the reset took. The tests send the checksum, never the token."""
    checksum = request.GET.get("checksum", "")
    stored = get_access_token_model().objects.filter(token_checksum=checksum).exists()
    return JsonResponse({"stored": stored})
