/**
 * The hub's only HTTP surface: `/board?ticket=…` swaps a one-time ticket for an HttpOnly
 * SameSite=Strict session cookie, `/board` serves the board page, `/board/board.js|css` its built
 * assets. Everything else is 404. Never any CORS header; a non-loopback Host is 403 (DNS rebinding).
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { join } from 'node:path';
import { boardPageHtml } from '../../core/formats/boardHtml';
import { type BoardSessions, hostAllowed, sessionCookieName } from './auth';

export interface BoardRouteContext {
	port: () => number;
	sessions: BoardSessions;
	/** Folder of the built board (`<dir of dist/baton.js>/webview/`). */
	webviewDir: string;
}

const assets: Record<string, string> = {
	'/board/board.js': 'text/javascript; charset=utf-8',
	'/board/board.css': 'text/css; charset=utf-8',
};

export function handleHttp(req: IncomingMessage, res: ServerResponse, ctx: BoardRouteContext): void {
	const port = ctx.port();
	if (!hostAllowed(req, port)) {
		send(res, 403, 'text/plain; charset=utf-8', 'Forbidden: this server only answers on 127.0.0.1 and localhost.\n');
		return;
	}
	const url = new URL(req.url ?? '/', `http://127.0.0.1:${port}`);
	if (req.method !== 'GET' && req.method !== 'HEAD') {
		send(res, 404, 'text/plain; charset=utf-8', 'Not found\n');
		return;
	}
	if (url.pathname === '/board' && url.searchParams.has('ticket')) {
		const session = ctx.sessions.redeem(url.searchParams.get('ticket') ?? '');
		if (session === undefined) {
			send(
				res,
				401,
				'text/plain; charset=utf-8',
				'This board link has expired or was already used. Run "baton board" again for a new one.\n',
			);
			return;
		}
		res.writeHead(302, {
			Location: '/board',
			'Set-Cookie': `${sessionCookieName}=${session}; HttpOnly; SameSite=Strict; Path=/`,
			'Cache-Control': 'no-store',
			'Referrer-Policy': 'no-referrer',
		});
		res.end();
		return;
	}
	if (url.pathname === '/board' || url.pathname in assets) {
		if (!ctx.sessions.validCookie(req)) {
			send(res, 401, 'text/plain; charset=utf-8', 'Open the board with "baton board" (it signs you in).\n');
			return;
		}
		if (url.pathname === '/board') {
			const html = boardPageHtml({
				nonce: randomBytes(24).toString('base64'),
				scriptUri: '/board/board.js',
				styleUri: '/board/board.css',
				cspSource: "'self'",
				// The board's websocket goes back to this hub at /ws, under either loopback name.
				connectSrc: `ws://127.0.0.1:${port} ws://localhost:${port}`,
				host: 'browser',
			});
			send(res, 200, 'text/html; charset=utf-8', html);
			return;
		}
		const type = assets[url.pathname] ?? 'application/octet-stream';
		let body: Buffer;
		try {
			body = readFileSync(join(ctx.webviewDir, url.pathname.slice('/board/'.length)));
		} catch {
			send(res, 404, 'text/plain; charset=utf-8', 'The board is not built (run "node esbuild.mjs").\n');
			return;
		}
		send(res, 200, type, body);
		return;
	}
	send(res, 404, 'text/plain; charset=utf-8', 'Not found\n');
}

function send(res: ServerResponse, status: number, type: string, body: string | Buffer): void {
	res.writeHead(status, {
		'Content-Type': type,
		'Cache-Control': 'no-store',
		'X-Content-Type-Options': 'nosniff',
		'X-Frame-Options': 'DENY',
		'Referrer-Policy': 'no-referrer',
	});
	res.end(body);
}
