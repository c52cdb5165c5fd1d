package authpolicy

import "testing"

func TestParsedOnce(t *testing.T) {
	body := []byte(`{"jwt": {"issuerUrl": "https://issuer.example"}, "priority": 1}`)
	a, err := parseAuthentication(body)
	if err != nil || a.JWT == nil || a.JWT.IssuerURL != "https://issuer.example" || a.Priority != 1 {
		t.Fatalf("parseAuthentication: %+v, %v", a, err)
	}
	b, _ := parseAuthentication(append([]byte(nil), body...))
	if a != b {
		t.Error("the same body was decoded twice")
	}
	// The same bytes as another kind of rule are decoded as that kind.
	z, err := parseAuthorization(body)
	if err != nil || z == nil || z.Priority != 1 {
		t.Errorf("parseAuthorization of the same body: %+v, %v", z, err)
	}
	// A body that does not decode keeps its error.
	for range 2 {
		if _, err := parseWhen([]byte(`{"predicate": 1}`)); err == nil {
			t.Error("parseWhen of an object: no error")
		}
	}
}
