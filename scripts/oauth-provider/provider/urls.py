from django.urls import include, path
from oauth2_provider import urls as oauth2_urls

from provider.views import MeView, token_state

urlpatterns = [
    # DOT's endpoints under /o/ (the issuer is http://127.0.0.1:PORT/o), its RFC 8414 metadata also at the root.
    path("o/", include("oauth2_provider.urls", namespace="oauth2_provider")),
    path("", include((oauth2_urls.metadata_urlpatterns, "oauth2_provider_metadata"))),
    path("api/me", MeView.as_view()),
    path("api/token-state", token_state),
]
