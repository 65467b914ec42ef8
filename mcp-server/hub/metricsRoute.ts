/**
 * `GET /metrics` on the hub's 127.0.0.1 listener: the Prometheus text exposition of
 * metrics.ts. A non-loopback Host is 403 (DNS rebinding, as boardRoute.ts); then an
 * `Authorization: Bearer` token must match the scrape token (run/metrics.token, which opens this
 * route and nothing else) or the hub's own token, compared in constant time; else 401. No CORS
 * header, no cookie: a browser page can never read it. Never echoes a token or a path.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { bearerToken, hostAllowed, tokenMatches } from './auth';
import type { HubMetrics } from './metrics';

export const metricsPath = '/metrics';

export interface MetricsRouteContext {
	port: () => number;
	/** The hub's full-access token (run/token). */
	token: string;
	/** The read-only scrape token (run/metrics.token). */
	scrapeToken: string;
	metrics: HubMetrics;
}

const textType = 'text/plain; charset=utf-8';

/** Serves one request whose path is `/metrics`. */
export async function handleMetrics(
	req: IncomingMessage,
	res: ServerResponse,
	ctx: MetricsRouteContext,
): Promise<void> {
	if (!hostAllowed(req, ctx.port())) {
		send(res, 403, textType, 'Forbidden: this server only answers on 127.0.0.1 and localhost.\n');
		return;
	}
	if (req.method !== 'GET' && req.method !== 'HEAD') {
		send(res, 405, textType, 'Only GET (or HEAD) /metrics.\n', { Allow: 'GET, HEAD' });
		return;
	}
	const given = bearerToken(req);
	// Both comparisons always run: which token matched must not show in the timing either.
	const scrape = tokenMatches(given, ctx.scrapeToken);
	const full = tokenMatches(given, ctx.token);
	if (!scrape && !full) {
		const why =
			given === undefined
				? 'Unauthorized: /metrics needs an "Authorization: Bearer <token>" header.'
				: "Unauthorized: that bearer token is not this hub's scrape token.";
		send(
			res,
			401,
			textType,
			`${why} Use the scrape token in the hub's run dir (metrics.token; "baton hub status --json" shows its path as metrics.tokenFile). In Prometheus: authorization: { credentials_file: <that path> }.\n`,
			{ 'WWW-Authenticate': 'Bearer realm="baton-metrics"' },
		);
		return;
	}
	const body = await ctx.metrics.render();
	send(res, 200, ctx.metrics.contentType, body);
}

function send(
	res: ServerResponse,
	status: number,
	type: string,
	body: string,
	extra: Record<string, string> = {},
): void {
	res.writeHead(status, {
		'Content-Type': type,
		'Cache-Control': 'no-store',
		'X-Content-Type-Options': 'nosniff',
		...extra,
	});
	res.end(body);
}
