#!/usr/bin/env node
/**
 * A stand-in "VS Code executable" for @vscode/test-electron's runTests({ vscodeExecutablePath }):
 * these machines cannot download VS Code, so it turns --extensionDevelopmentPath / --extensionTestsPath
 * into code-server (the real workbench and Node extension host) driven by headless Chromium, and exits
 * with the suite's exit code. Adapted from ../shared/tools/vscode-shim.example.js (TESTING.md).
 *
 * It also serves the UI checks: the suite, running in the extension host, POSTs to BATON_UI_URL and
 * the shim runs test/extension/uiChecks.ts with Playwright on this very page, so the UI is checked
 * against the state the suite just built. Plain JS because runTests spawns it as an executable.
 */
'use strict';
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const http = require('node:http');
const net = require('node:net');
const os = require('node:os');
const path = require('node:path');
const util = require('node:util');
const { chromium } = require('playwright-core');

const codeServerBin = process.env.CODE_SERVER_BIN || 'code-server';
const timeoutMs = Number(process.env.SHIM_TIMEOUT_MS || 300_000);
const devPaths = [];
const positional = [];
let testsPath;
let userDataDir;
let extensionsDir;
for (const arg of process.argv.slice(2)) {
	const m = /^--([^=]+)=(.*)$/.exec(arg);
	if (m && m[1] === 'extensionDevelopmentPath') {
		devPaths.push(path.resolve(m[2]));
	} else if (m && m[1] === 'extensionTestsPath') {
		testsPath = path.resolve(m[2]);
	} else if (m && m[1] === 'user-data-dir') {
		userDataDir = m[2];
	} else if (m && m[1] === 'extensions-dir') {
		extensionsDir = m[2];
	} else if (!arg.startsWith('--')) {
		positional.push(path.resolve(arg));
	}
}

const freePort = () =>
	new Promise((resolve, reject) => {
		const s = net.createServer().listen(0, '127.0.0.1', () => {
			const { port } = s.address();
			s.close(() => resolve(port));
		});
		s.on('error', reject);
	});

/** Console lines of the workbench that are noise on an offline machine. */
const noise =
	/^(Resolv|Creating a socket|Updating additional|\[Service Worker\]|ChatSessionStore|File not found:|.*open-vsx|.*vsda|.*Failed to load resource)/;

async function main() {
	// Short on purpose: the hub's Unix socket path must stay under 107 bytes.
	const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'vsc-'));
	userDataDir = userDataDir || path.join(tmp, 'ud');
	extensionsDir = extensionsDir || path.join(tmp, 'ext');
	fs.mkdirSync(path.join(userDataDir, 'User'), { recursive: true });
	fs.writeFileSync(
		path.join(userDataDir, 'User', 'settings.json'),
		JSON.stringify({
			'workbench.startupEditor': 'none',
			'telemetry.telemetryLevel': 'off',
			'workbench.tips.enabled': false,
			'chat.commandCenter.enabled': false,
		}),
	);
	fs.writeFileSync(path.join(tmp, 'config.yaml'), 'auth: none\ncert: false\n');
	fs.mkdirSync(path.join(tmp, 'tmp'));
	const port = await freePort();

	let page;
	const uiServer = http.createServer((req, res) => {
		let body = '';
		req.on('data', c => (body += c));
		req.on('end', () => {
			void (async () => {
				try {
					const { require: tsxRequire } = require('tsx/cjs/api');
					const { runUiCheck } = tsxRequire('./uiChecks.ts', __filename);
					const result = await runUiCheck(page, JSON.parse(body || '{}'));
					res.writeHead(200, { 'content-type': 'application/json' });
					res.end(JSON.stringify({ ok: true, result }));
				} catch (e) {
					res.writeHead(200, { 'content-type': 'application/json' });
					res.end(JSON.stringify({ ok: false, error: String(e && e.stack ? e.stack : e) }));
				}
			})();
		});
	});
	await new Promise(r => uiServer.listen(0, '127.0.0.1', r));
	const uiUrl = `http://127.0.0.1:${uiServer.address().port}/`;

	const env = {
		...process.env,
		TMPDIR: path.join(tmp, 'tmp'),
		XDG_CONFIG_HOME: path.join(tmp, 'xdg'),
		XDG_DATA_HOME: path.join(tmp, 'xdg'),
		BATON_UI_URL: uiUrl,
	};
	const logFile = path.join(tmp, 'cs.log');
	const cs = spawn(
		codeServerBin,
		[
			'--config',
			path.join(tmp, 'config.yaml'),
			'--user-data-dir',
			userDataDir,
			'--extensions-dir',
			extensionsDir,
			'--bind-addr',
			`127.0.0.1:${port}`,
			'--auth',
			'none',
			'--disable-telemetry',
			'--disable-update-check',
			'--disable-workspace-trust',
		],
		{ env, detached: true, stdio: ['ignore', fs.openSync(logFile, 'w'), 'inherit'] },
	);
	const killServer = () => {
		try {
			process.kill(-cs.pid, 'SIGTERM');
		} catch {
			// Already gone.
		}
	};
	process.on('SIGINT', () => {
		killServer();
		process.exit(130);
	});
	let healthy = false;
	for (let i = 0; i < 300 && !healthy; i++) {
		try {
			healthy = (await fetch(`http://127.0.0.1:${port}/healthz`)).ok;
		} catch {
			await new Promise(r => setTimeout(r, 100));
		}
	}
	if (!healthy) {
		killServer();
		throw new Error(`code-server did not become healthy; see ${logFile}`);
	}
	const authority = `127.0.0.1:${port}`;
	const remote = p => `vscode-remote://${authority}${p}`;
	const payload = [
		...devPaths.map(d => ['extensionDevelopmentPath', remote(d)]),
		['extensionTestsPath', remote(testsPath)],
	];
	const folder = positional[0] ? `folder=${encodeURIComponent(positional[0])}&` : 'ew=true&';
	const url = `http://${authority}/?${folder}payload=${encodeURIComponent(JSON.stringify(payload))}`;
	const ctx = await chromium.launchPersistentContext(path.join(tmp, 'chrome'), {
		executablePath: process.env.CHROMIUM_PATH || '/usr/bin/chromium',
		headless: true,
		viewport: { width: 1600, height: 1000 },
		args: [
			'--no-sandbox',
			'--disable-gpu',
			'--disable-quic',
			'--no-first-run',
			'--disable-background-networking',
			'--disable-component-update',
			'--disable-sync',
		],
	});
	page = ctx.pages()[0] || (await ctx.newPage());
	const code = await new Promise(resolve => {
		const timer = setTimeout(() => {
			console.error(`vscodeShim: the suite did not finish within ${timeoutMs} ms`);
			resolve(124);
		}, timeoutMs);
		void (async () => {
			await page.exposeFunction('codeAutomationLog', (_type, args) => {
				const line = util.format(...(args || []));
				if (!noise.test(line)) {
					console.log(line);
				}
			});
			await page.exposeFunction('codeAutomationExit', c => {
				clearTimeout(timer);
				resolve(c);
			});
			await page.goto(url);
		})().catch(e => {
			console.error(e);
			resolve(1);
		});
	});
	await ctx.close();
	uiServer.close();
	killServer();
	fs.rmSync(tmp, { recursive: true, force: true });
	process.exit(code);
}

main().catch(e => {
	console.error(e);
	process.exit(1);
});
