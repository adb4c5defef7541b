// Command avatars-get is the Lambda for GET /v1/avatars/{id}: presigning GETs of the avatar's parts (its role may only s3:GetObject there): the same handler as the local stack,
// behind API Gateway's authorizer.
package main

import "github.com/bridgeline/bridgeline/functions/internal/avawire"

func main() { avawire.Start("avatars-get") }
