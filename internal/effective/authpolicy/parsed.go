package authpolicy

import (
	"encoding/json"
	"sync"

	kuadrantv1 "github.com/agpol/agpol/internal/apis/kuadrant/v1"
)

// Rule bodies are decoded once per distinct body and kind, not once per request:
// Requirements runs for every simulated request and decoding JSON was most of its
// time. The decoded values are only read afterwards, so sharing them is safe.
var parsedBodies sync.Map // parsedKey → parsedBody

type parsedKey struct {
	kind string
	body string
}

type parsedBody struct {
	value any
	err   error
}

// parsedOnce returns parse(raw), decoded once per (kind, raw).
func parsedOnce[T any](kind string, raw []byte, parse func([]byte) (T, error)) (T, error) {
	key := parsedKey{kind, string(raw)}
	if v, ok := parsedBodies.Load(key); ok {
		p := v.(parsedBody)
		return p.value.(T), p.err
	}
	t, err := parse(raw)
	v, _ := parsedBodies.LoadOrStore(key, parsedBody{t, err})
	p := v.(parsedBody)
	return p.value.(T), p.err
}

func parseAuthentication(raw []byte) (*kuadrantv1.AuthenticationSpec, error) {
	return parsedOnce("authentication", raw, kuadrantv1.ParseAuthentication)
}

func parseAuthorization(raw []byte) (*kuadrantv1.AuthorizationSpec, error) {
	return parsedOnce("authorization", raw, kuadrantv1.ParseAuthorization)
}

func parseNamedPattern(raw []byte) (*kuadrantv1.NamedPattern, error) {
	return parsedOnce("pattern", raw, kuadrantv1.ParseNamedPattern)
}

func parseWhen(raw []byte) ([]kuadrantv1.WhenPredicate, error) {
	return parsedOnce("when", raw, func(b []byte) ([]kuadrantv1.WhenPredicate, error) {
		var preds []kuadrantv1.WhenPredicate
		err := json.Unmarshal(b, &preds)
		return preds, err
	})
}
