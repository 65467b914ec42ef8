/**
 * The held-files model behind the Explorer decorations and the edit warning (extension/heldFiles.ts),
 * in plain Node: which files a live claim holds in which workspace root (by project; a card without
 * one in every root), the exact tooltip, what stops holding (complete, release, another project), the
 * signature that decides whether decorations fire, and the project filter the tree and board share.
 */
import assert from 'node:assert/strict';
import path from 'node:path';
import { describe, it } from 'node:test';

import { HeldFiles, heldBadge, heldText, inProjects, worktreeRelative } from '../../extension/heldFiles';
import { makeCard } from '../helpers/cards';

const web = { root: path.resolve('/ws/web'), project: 'github.com/acme/web' };
const api = { root: path.resolve('/ws/api'), project: 'github.com/acme/api' };
const loose = { root: path.resolve('/ws/notes'), project: undefined };
const at = (root: { root: string }, rel: string) => path.join(root.root, ...rel.split('/'));

const auth = makeCard({
	id: 'AUTH-3',
	title: 'Session cookie hardening',
	status: 'claimed',
	claimOwner: 'claude-code-1',
	claimEpoch: 4,
	project: 'github.com/acme/web',
	scope: ['src/auth/**', 'package.json'],
	reserved: ['docs/{security,cookies}.md'],
});

describe('held files', () => {
	it('decorates the files of a live claim in its project’s root, with the exact tooltip', () => {
		const held = new HeldFiles([auth], [web, api, loose]);
		for (const rel of ['src/auth/session.ts', 'src/auth', 'src/auth/deep/.env', 'package.json', 'docs/cookies.md']) {
			assert.deepEqual(held.decorationOf(at(web, rel)), {
				badge: heldBadge,
				tooltip: 'Held by claude-code-1 for AUTH-3 — Session cookie hardening',
				holders: [auth],
			});
		}
		for (const rel of ['src/authz.ts', 'src/billing/a.ts', 'docs/other.md', 'web/package.json']) {
			assert.equal(held.decorationOf(at(web, rel)), undefined, rel);
		}
		assert.equal(held.decorationOf(at(api, 'src/auth/session.ts')), undefined, 'another project’s root');
		assert.equal(held.decorationOf(at(loose, 'src/auth/session.ts')), undefined, 'a folder outside git');
		assert.equal(held.decorationOf(path.resolve('/elsewhere/src/auth/a.ts')), undefined, 'outside every root');
		assert.equal(held.decorationOf(web.root), undefined, 'the root itself');
	});

	it('decorates the same paths inside the cards’ worktrees (.baton/worktrees/<ID>/), and nothing else there', () => {
		const held = new HeldFiles([auth], [web, api]);
		for (const id of ['AUTH-3', 'UI-7']) {
			for (const rel of ['src/auth/session.ts', 'package.json', 'docs/security.md']) {
				assert.deepEqual(held.holdersOf(at(web, `.baton/worktrees/${id}/${rel}`)), [auth], `${id}: ${rel}`);
			}
			assert.deepEqual(held.holdersOf(at(web, `.baton/worktrees/${id}/src/billing/a.ts`)), []);
		}
		assert.deepEqual(held.holdersOf(at(web, '.baton/worktrees/AUTH-3')), [], 'the worktree folder itself');
		assert.deepEqual(held.holdersOf(at(api, '.baton/worktrees/AUTH-3/src/auth/a.ts')), [], 'another project');
		assert.equal(worktreeRelative('.baton/worktrees/A:1/src/x.ts'), 'src/x.ts');
		assert.equal(worktreeRelative('.baton/other/src/x.ts'), '.baton/other/src/x.ts');
	});

	it('applies a card without a project to every root, and lists every holder', () => {
		const shared = makeCard({
			id: 'OPS-1',
			title: 'Bump CI image',
			status: 'claimed',
			claimOwner: 'codex-2',
			project: null,
			scope: ['package.json', 'lock:ci'],
		});
		const held = new HeldFiles([auth, shared], [web, loose]);
		assert.equal(
			held.decorationOf(at(web, 'package.json'))?.tooltip,
			'Held by claude-code-1 for AUTH-3 — Session cookie hardening\nHeld by codex-2 for OPS-1 — Bump CI image',
		);
		assert.deepEqual(held.holdersOf(at(loose, 'package.json')), [shared]);
		assert.equal(held.size, 6, 'AUTH-3’s 4 globs and OPS-1’s 1 in web, OPS-1’s 1 in notes; the lock names no file');
	});

	it('holds nothing once the claim ends, and its signature says decorations must change', () => {
		const live = new HeldFiles([auth], [web]);
		for (const ended of [
			{ ...auth, status: 'review' as const, reserved: [] },
			{ ...auth, status: 'ready' as const, claimOwner: null, reserved: [] },
			{ ...auth, status: 'done' as const },
		]) {
			const after = new HeldFiles([ended], [web]);
			assert.equal(after.decorationOf(at(web, 'src/auth/a.ts')), undefined, ended.status);
			assert.notEqual(after.signature, live.signature);
		}
		const progress = new HeldFiles([{ ...auth, progress: 50, version: 9 }], [web]);
		assert.equal(progress.signature, live.signature, 'progress alone changes no decoration');
		const reclaimed = new HeldFiles([{ ...auth, claimEpoch: 5, claimOwner: 'codex-2' }], [web]);
		assert.notEqual(reclaimed.signature, live.signature, 'a new holder (epoch) does');
		assert.equal(
			heldText(reclaimed.holdersOf(at(web, 'package.json'))[0]!),
			'Held by codex-2 for AUTH-3 — Session cookie hardening',
		);
	});

	it('filters by project: the workspace’s projects and cards without one; none given shows all', () => {
		const projects = ['github.com/acme/web'];
		assert.equal(inProjects({ project: 'github.com/acme/web' }, projects), true);
		assert.equal(inProjects({ project: 'github.com/acme/api' }, projects), false);
		assert.equal(inProjects({ project: null }, projects), true);
		assert.equal(inProjects({}, projects), true, 'a hub older than projects sends no project');
		assert.equal(inProjects({ project: 'github.com/acme/api' }, undefined), true);
		assert.equal(inProjects({ project: 'github.com/acme/api' }, []), true);
	});
});
