/**
 * The real Claude Code CLI for the dispatch tests: npm package `@anthropic-ai/claude-code`,
 * pinned, installed on first use into the ignored test cache (.vscode-test/, beside the code-server
 * builds), never into the project's node_modules. `ensureClaude` holds a lock, so the install .ci/run
 * starts (test/dispatch/installClaude.ts) is waited for, never used half done. `offlineClaudeEnv` is the
 * environment the tests run it in: a throwaway HOME (no login, no settings), no API key, the API and
 * every non-essential request pointed nowhere, so no test reaches a model.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

export const claudeVersion = '2.1.197';
const repoRoot = resolve(import.meta.dirname, '..', '..');
export const claudeDir = join(repoRoot, '.vscode-test', `claude-code-${claudeVersion}`);
/** The folder holding the `claude` program (put it on PATH for `baton run --agent claude`). */
export const claudeBinDir = join(claudeDir, 'node_modules', '.bin');

const installScript = `
set -euo pipefail
DEST="$1"; VERSION="$2"
mkdir -p "$(dirname "$DEST")"
exec 9>"$DEST.lock"
flock 9
works() { HOME="$DEST/home" "$DEST/node_modules/.bin/claude" --version >/dev/null 2>&1; }
mkdir -p "$DEST/home"
works && exit 0
# The outer npm's settings (npm_config_*) must not steer this install.
while read -r var; do unset "$var"; done < <(compgen -e | grep '^npm_' || true)
cd "$DEST"; [ -f package.json ] || npm init -y >/dev/null
npm install --no-audit --no-fund "@anthropic-ai/claude-code@$VERSION" >install.log 2>&1 || { tail -20 install.log; exit 1; }
# Its postinstall puts the platform's native binary in place; an npm that skipped install scripts
# leaves a stub, so run it here.
works || node node_modules/@anthropic-ai/claude-code/install.cjs >>install.log 2>&1
works || { echo "claude --version fails after the install:"; tail -20 install.log; exit 1; }
echo "installed Claude Code $VERSION into $DEST"
`;

/** Installs the pinned Claude Code once; returns the folder holding `claude`. */
export function ensureClaude(): string {
	const r = spawnSync('bash', ['-c', installScript, 'installClaude', claudeDir, claudeVersion], {
		stdio: 'inherit',
		timeout: 600_000,
	});
	if (r.status !== 0) {
		throw new Error(`Installing Claude Code ${claudeVersion} failed (see the output above).`);
	}
	return claudeBinDir;
}

/**
 * An environment in which Claude Code cannot reach a model: a fresh HOME (not logged in), no
 * ANTHROPIC_* credentials, the API base a closed local port, auto-update and telemetry off.
 */
export function offlineClaudeEnv(pathVar: string): Record<string, string> {
	return {
		PATH: pathVar,
		HOME: mkdtempSync(join(tmpdir(), 'bt-claude-home-')),
		LANG: 'C.UTF-8',
		ANTHROPIC_BASE_URL: 'http://127.0.0.1:9',
		DISABLE_AUTOUPDATER: '1',
		CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
		DISABLE_TELEMETRY: '1',
	};
}
