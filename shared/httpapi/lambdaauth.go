package httpapi

// The AWS shape of API-key auth. API Gateway calls the authorizer Lambda (Authorizer) with
// the request's Authorization header and caches its answer per header value; each /v1
// function then reads the answer from the request context (LambdaAuth) instead of looking
// the key up itself.
//
// An HTTP API cannot shape a denying authorizer's response: it is a bare
// 403 {"message":"Forbidden"}. The authorizer denies malformed and unknown keys all the
// same (AuthorizerHandler says why), and lets a revoked key through with the error code
// in its context, so LambdaAuth answers it with the documented 401 error body. A request
// with no Authorization header at all never reaches the authorizer (the header is its
// identity source, the cache key): API Gateway answers it 401 {"message":"Unauthorized"}.

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/awslabs/aws-lambda-go-api-proxy/core"

	"github.com/bridgeline/bridgeline/shared/account"
	"github.com/bridgeline/bridgeline/shared/apierr"
)

// Keys of the authorizer's context, as the functions see them in
// requestContext.authorizer.lambda.
const (
	AuthorizerAccountID   = "account_id"
	AuthorizerAccountName = "account_name"
	AuthorizerBrandColor  = "account_brand_color"
	AuthorizerLiveKey     = "key_live" // true for an sk_live_ key
	AuthorizerKeyID       = "key_id"   // the API key's id (key_...)
	AuthorizerErrorCode   = "auth_error"
	AuthorizerRevoked     = "key_revoked"
	// AuthorizerErrorMessage is the 401's message when the header holds no key in a form
	// the API takes (a bare key, another scheme): the function says how to send it.
	AuthorizerErrorMessage = "auth_message"
)

// errRevoked is the answer to a revoked key: still api_key_invalid, with a message that
// says why.
var errRevoked = apierr.New(apierr.CodeAPIKeyInvalid, "this API key was revoked")

// authorizeKey finds the account and the key an Authorization header's API key belongs
// to, and records the key's use when the stored last use is older than
// account.TouchEvery. A missing, malformed, unknown or revoked key is an *apierr.Error
// (401); anything else is an internal error.
func authorizeKey(ctx context.Context, accounts account.Store, authorization string, now time.Time) (account.Account, account.Key, error) {
	text, err := keyFrom(authorization)
	if err != nil {
		return account.Account{}, account.Key{}, err
	}
	if !account.WellFormed(text) {
		return account.Account{}, account.Key{}, apierr.New(apierr.CodeAPIKeyInvalid, "invalid API key")
	}
	k, acct, err := accounts.KeyAndAccount(ctx, account.HashKey(text))
	if errors.Is(err, apierr.ErrNotFound) {
		return account.Account{}, account.Key{}, apierr.New(apierr.CodeAPIKeyInvalid, "invalid API key")
	}
	if err != nil {
		return account.Account{}, account.Key{}, fmt.Errorf("authenticate: %w", err)
	}
	if k.Revoked() {
		return account.Account{}, k, errRevoked
	}
	if k.LastUsedAt == nil || now.Sub(*k.LastUsedAt) >= account.TouchEvery {
		// Best effort: a failed write of the last-used time must not refuse the request.
		_ = accounts.TouchKey(ctx, k.Hash, now)
	}
	return acct, k, nil
}

// AuthorizerHandler is the Lambda authorizer: an HTTP API REQUEST authorizer with payload
// format 2.0 and simple responses. API Gateway caches its answer per Authorization header
// (template.yaml: ReauthorizeEvery), allows and denies alike.
//
//   - A key of an account is allowed, with the account in the context.
//   - A revoked key is allowed with AuthorizerErrorCode in the context, so the function
//     answers the documented 401 ("this API key was revoked"): revoked keys are a few
//     known ones, not a flood.
//   - A header with no key in a form the API takes (a bare key, another scheme) is
//     allowed with api_key_missing and AuthorizerErrorMessage in the context, so the
//     function answers the 401 that says how to send the key.
//   - A malformed or unknown key is denied: API Gateway answers 403 {"message":"Forbidden"}
//     itself and caches the deny, so a client guessing keys reaches no function and, per
//     header, the authorizer once per cache period.
//
// A store failure is returned as an error, which API Gateway turns into a 500 without
// calling the function.
func AuthorizerHandler(accounts account.Store) func(context.Context, events.APIGatewayV2CustomAuthorizerV2Request) (events.APIGatewayV2CustomAuthorizerSimpleResponse, error) {
	return func(ctx context.Context, req events.APIGatewayV2CustomAuthorizerV2Request) (events.APIGatewayV2CustomAuthorizerSimpleResponse, error) {
		header := req.Headers["authorization"]
		if header == "" && len(req.IdentitySource) > 0 {
			header = req.IdentitySource[0]
		}
		acct, k, err := authorizeKey(ctx, accounts, header, time.Now())
		if err == errRevoked {
			return events.APIGatewayV2CustomAuthorizerSimpleResponse{
				IsAuthorized: true,
				Context:      map[string]any{AuthorizerErrorCode: apierr.CodeAPIKeyInvalid, AuthorizerRevoked: true},
			}, nil
		}
		if e, ok := apierr.As(err); ok && e.Code == apierr.CodeAPIKeyMissing {
			// A header that holds no key in a form the API takes (a bare key, another
			// scheme) reaches the function, which answers 401 saying how to send it.
			return events.APIGatewayV2CustomAuthorizerSimpleResponse{
				IsAuthorized: true,
				Context:      map[string]any{AuthorizerErrorCode: apierr.CodeAPIKeyMissing, AuthorizerErrorMessage: e.Message},
			}, nil
		}
		if _, ok := apierr.As(err); ok {
			return events.APIGatewayV2CustomAuthorizerSimpleResponse{IsAuthorized: false}, nil
		}
		if err != nil {
			return events.APIGatewayV2CustomAuthorizerSimpleResponse{}, err
		}
		return events.APIGatewayV2CustomAuthorizerSimpleResponse{
			IsAuthorized: true,
			Context: map[string]any{
				AuthorizerAccountID:   acct.ID,
				AuthorizerAccountName: acct.Name,
				AuthorizerBrandColor:  acct.BrandColor,
				AuthorizerLiveKey:     k.Live(),
				AuthorizerKeyID:       k.ID,
			},
		}, nil
	}
}

// LambdaAuth is the auth middleware of a function behind the authorizer: it takes the
// account from the authorizer's context, and fails closed (401) when there is none.
func (a *API) LambdaAuth(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var lambdaCtx map[string]any
		if gw, ok := core.GetAPIGatewayV2ContextFromContext(r.Context()); ok && gw.Authorizer != nil {
			lambdaCtx = gw.Authorizer.Lambda
		}
		if code, _ := lambdaCtx[AuthorizerErrorCode].(string); code != "" {
			msg := "invalid API key"
			if revoked, _ := lambdaCtx[AuthorizerRevoked].(bool); revoked {
				msg = errRevoked.Message
			}
			if code == apierr.CodeAPIKeyMissing {
				msg = "no API key: send it as `Authorization: Bearer sk_...`"
				if m, _ := lambdaCtx[AuthorizerErrorMessage].(string); m != "" {
					msg = m
				}
			} else {
				code = apierr.CodeAPIKeyInvalid
			}
			a.writeError(w, r, apierr.New(code, msg))
			return
		}
		id, _ := lambdaCtx[AuthorizerAccountID].(string)
		if id == "" {
			a.writeError(w, r, apierr.New(apierr.CodeAPIKeyMissing, "no API key: send it as `Authorization: Bearer sk_...`"))
			return
		}
		name, _ := lambdaCtx[AuthorizerAccountName].(string)
		color, _ := lambdaCtx[AuthorizerBrandColor].(string)
		live, _ := lambdaCtx[AuthorizerLiveKey].(bool)
		keyID, _ := lambdaCtx[AuthorizerKeyID].(string)
		Authenticated(w, r, account.Caller{Account: account.Account{ID: id, Name: name, BrandColor: color}, Live: live, KeyID: keyID}, next)
	})
}
