"""TEST ONLY: makes every request one of the test user's, so that the tests approve logins and device codes without a
human — the login page and the consent screen are skipped (the clients have skip_authorization), and DOT's own
device views (/o/device/, /o/device-confirm/…) accept the tests' POSTs as the user's."""

from django.contrib.auth import get_user_model

TEST_USERNAME = "test-user"


class TestUserMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        if not request.user.is_authenticated:
            request.user = get_user_model().objects.get(username=TEST_USERNAME)
        return self.get_response(request)
