// The identity provider of the OAuth end-to-end tests: oidc-provider (OpenID Certified) on
// 127.0.0.1, issuing RFC 9068 JWT access tokens with the client-credentials grant and RFC 8707
// resource indicators. One JSON argument configures it:
//   { "clients": [{ "id", "secret", "tenant", "scope", "ttl" }], "resources": ["https://..."] }
// Each client's token carries `tenant` (a claim the server is told to read) and the scopes it
// asked for among its own. A resource indicator must be one of `resources`; the token's `aud`
// is that resource. It prints one line, `{"issuer": "http://127.0.0.1:PORT"}`, when it listens.
//
// POST /test/forge signs the JSON claims of its body with a key of its own under the kid of
// the provider's real key: the "token signed by another key" of the tests.
import { createServer } from 'node:http';
import Provider, { errors } from 'oidc-provider';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';

const config = JSON.parse(process.argv[2] ?? '{}');
const clients = config.clients ?? [];
const resources = new Set(config.resources ?? []);
const KID = 'devtools-mcp-test-key';

async function signingKey() {
  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  return { privateKey, jwk: { ...(await exportJWK(privateKey)), kid: KID, alg: 'RS256', use: 'sig' } };
}

const real = await signingKey();
const forger = await signingKey();

const byId = new Map(clients.map((client) => [client.id, client]));
const allScopes = [...new Set(clients.flatMap((client) => client.scope.split(' ')))];

const server = createServer();
server.listen(0, '127.0.0.1', () => {
  const issuer = `http://127.0.0.1:${server.address().port}`;
  const provider = new Provider(issuer, {
    jwks: { keys: [real.jwk] },
    clients: clients.map((client) => ({
      client_id: client.id,
      client_secret: client.secret,
      grant_types: ['client_credentials'],
      response_types: [],
      redirect_uris: [],
      token_endpoint_auth_method: 'client_secret_basic',
      scope: client.scope,
    })),
    scopes: allScopes,
    features: {
      devInteractions: { enabled: false },
      clientCredentials: { enabled: true },
      introspection: { enabled: false },
      resourceIndicators: {
        enabled: true,
        defaultResource: (ctx, client, oneOf) => oneOf,
        useGrantedResource: () => true,
        getResourceServerInfo: (ctx, resourceIndicator, client) => {
          if (!resources.has(resourceIndicator)) {
            throw new errors.InvalidTarget(`unknown resource ${resourceIndicator}`);
          }
          return {
            scope: byId.get(client.clientId)?.scope ?? '',
            audience: resourceIndicator,
            accessTokenFormat: 'jwt',
            accessTokenTTL: byId.get(client.clientId)?.ttl ?? 300,
            jwt: { sign: { alg: 'RS256' } },
          };
        },
      },
    },
    extraTokenClaims: (ctx, token) => {
      const tenant = byId.get(token.clientId)?.tenant;
      return tenant ? { tenant } : undefined;
    },
  });
  provider.on('server_error', (ctx, error) => console.error('idp server_error', error));
  const callback = provider.callback();
  server.on('request', (request, response) => {
    if (request.method === 'POST' && request.url === '/test/forge') {
      forge(request, response);
    } else {
      callback(request, response);
    }
  });
  console.log(JSON.stringify({ issuer }));
});

function forge(request, response) {
  let body = '';
  request.on('data', (chunk) => { body += chunk; });
  request.on('end', async () => {
    try {
      const token = await new SignJWT(JSON.parse(body))
        .setProtectedHeader({ alg: 'RS256', kid: KID, typ: 'at+jwt' })
        .sign(forger.privateKey);
      response.writeHead(200, { 'content-type': 'text/plain' }).end(token);
    } catch (error) {
      response.writeHead(400, { 'content-type': 'text/plain' }).end(String(error));
    }
  });
}

// The test kills this process; stdin closing (the test died) ends it too.
process.stdin.resume();
process.stdin.on('end', () => process.exit(0));
