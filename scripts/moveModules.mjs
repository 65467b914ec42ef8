// Moves modules to new paths and rewrites every relative import to them (folders that
// show the design). The map is data (scripts/moveMap.json: "old": "new" per file, "old/": "new/" for
// a whole folder), so the move can be replayed on a tree with files this script has never seen: each
// relative specifier (import, export … from, import(), require(), import types) of every source file
// is resolved to a file the way tsconfig's "bundler" resolution does, and recomputed only when its
// importer or its target moves. A specifier that no longer resolves but names a moved file's old path
// is repointed too, so a second run fixes files written against the old layout and changes nothing
// else. Then repo-root paths named in text (comments, docs, tsconfig lists: `core/rules.ts`) are
// rewritten, and the bare name of a renamed file when no other file has it (`claimRules.ts`),
// CHANGELOG.md excepted (history). It never edits anything but the files it moves and
// rewrites, and prints what it did.
//
//   node scripts/moveModules.mjs [--map scripts/moveMap.json] [--dry-run] [--no-mentions] [--no-format]
import { execFileSync } from 'node:child_process';
import {
	existsSync,
	mkdirSync,
	readFileSync,
	readdirSync,
	renameSync,
	rmdirSync,
	statSync,
	writeFileSync,
} from 'node:fs';
import { dirname, join, posix, resolve } from 'node:path';
import ts from 'typescript';

const argv = process.argv.slice(2);
const flag = name => argv.includes(name);
const option = (name, fallback) => (argv.includes(name) ? argv[argv.indexOf(name) + 1] : fallback);
const root = execFileSync('git', ['rev-parse', '--show-toplevel'], { encoding: 'utf8' }).trim();
const dryRun = flag('--dry-run');
const mapFile = resolve(option('--map', join(root, 'scripts', 'moveMap.json')));
const map = JSON.parse(readFileSync(mapFile, 'utf8')).moves;

const sourceExt = /\.(ts|tsx|mts|cts|js|mjs|cjs)$/;
const mentionExt = /\.(ts|tsx|mts|cts|js|mjs|cjs|md|json|ya?ml|sh)$/;
const skipped =
	/^(node_modules|dist|\.vscode-test|\.baton)\/|(^|\/)package-lock\.json$|^CHANGELOG\.md$|^test\/fixtures\//;

const git = (...args) => execFileSync('git', args, { cwd: root, encoding: 'utf8', maxBuffer: 64 << 20 });
const listed = [
	...git('ls-files', '-z').split('\0'),
	...git('ls-files', '-z', '--others', '--exclude-standard').split('\0'),
];
const files = [...new Set(listed)].filter(f => f !== '' && !skipped.test(f) && existsSync(join(root, f)));
const existing = new Set(files);

/** The file moves of the map, folders expanded to the files now under them (repo-relative, posix). */
function expandMoves() {
	const moves = new Map();
	for (const [from, to] of Object.entries(map)) {
		if (from.endsWith('/')) {
			for (const f of files) {
				if (f.startsWith(from)) {
					moves.set(f, to + f.slice(from.length));
				}
			}
		} else if (existing.has(from)) {
			moves.set(from, to);
		} else if (!existing.has(to)) {
			console.warn(`moveModules: neither ${from} nor ${to} exists; skipped`);
		}
	}
	return moves;
}
const moves = expandMoves();
const newPath = f => moves.get(f) ?? f;
const after = new Set(files.map(newPath));

const candidates = base => {
	const withoutJs = base.replace(/\.(js|mjs|cjs)$/, '');
	return [
		base,
		...['.ts', '.tsx', '.mts', '.cts', '.d.ts', '.js', '.mjs', '.cjs'].map(e => base + e),
		...(withoutJs === base ? [] : ['.ts', '.tsx', '.mts', '.cts'].map(e => withoutJs + e)),
		...['/index.ts', '/index.tsx', '/index.js', '/index.mjs'].map(e => base + e),
	];
};

/** The repo file a relative specifier names, before the move; a moved file's old path if only that fits. */
function resolveSpecifier(importer, spec) {
	const base = posix.normalize(posix.join(posix.dirname(importer), spec));
	const found = candidates(base).find(c => existing.has(c));
	if (found !== undefined) {
		return found;
	}
	// Written against the old layout, after a run: the old path's new place, if that exists.
	const target = candidates(base)
		.map(mapped)
		.find(t => t !== undefined && after.has(t));
	return target === undefined ? undefined : { movedTo: target };
}

/** Where the map sends a path (a file entry, or a folder entry it lies under), else undefined. */
function mapped(path) {
	if (map[path] !== undefined) {
		return map[path];
	}
	const folder = Object.keys(map).find(k => k.endsWith('/') && path.startsWith(k));
	return folder === undefined ? undefined : map[folder] + path.slice(folder.length);
}

/** The specifier for `target` from `importer` (both after the move), in the old specifier's style. */
function specifierFor(importer, target, old) {
	const ext = posix.extname(target);
	const oldExt = posix.extname(old);
	let rel = posix.relative(posix.dirname(importer), target);
	if (['.js', '.mjs', '.cjs', '.ts', '.mts'].includes(oldExt) && /\.(d\.)?[cm]?[tj]sx?$/.test(target)) {
		rel = rel.slice(0, -ext.length) + oldExt;
	} else if (oldExt !== ext || ext === '') {
		rel = rel.replace(/(\.d)?\.[cm]?[tj]sx?$/, '');
		const dir = rel.replace(/\/index$/, '');
		const dirPath = posix.join(posix.dirname(importer), dir);
		const ambiguous = candidates(dirPath)
			.slice(0, 9)
			.some(c => after.has(c));
		if (rel.endsWith('/index') && !old.endsWith('/index') && !ambiguous) {
			rel = dir;
		}
	}
	if (rel === 'index' && !old.endsWith('index')) {
		rel = '.';
	}
	return rel.startsWith('.') ? rel : `./${rel}`;
}

/** Every module specifier literal of a source file: its text range and value. */
function specifiers(file, text) {
	const kind = /\.(js|mjs|cjs)$/.test(file) ? ts.ScriptKind.JS : ts.ScriptKind.TS;
	const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, kind);
	const out = [];
	const add = lit => {
		if (lit && ts.isStringLiteralLike(lit)) {
			out.push({ start: lit.getStart(sf) + 1, end: lit.getEnd() - 1, value: lit.text });
		}
	};
	const visit = node => {
		if (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) {
			add(node.moduleSpecifier);
		} else if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference)) {
			add(node.moduleReference.expression);
		} else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)) {
			add(node.argument.literal);
		} else if (
			ts.isCallExpression(node) &&
			(node.expression.kind === ts.SyntaxKind.ImportKeyword ||
				(ts.isIdentifier(node.expression) && node.expression.text === 'require'))
		) {
			add(node.arguments[0]);
		}
		ts.forEachChild(node, visit);
	};
	visit(sf);
	return out;
}

const rewritten = new Map();
let specifierCount = 0;
for (const file of files.filter(f => sourceExt.test(f))) {
	const text = readFileSync(join(root, file), 'utf8');
	const edits = [];
	for (const s of specifiers(file, text)) {
		if (!s.value.startsWith('./') && !s.value.startsWith('../') && s.value !== '.' && s.value !== '..') {
			continue;
		}
		const target = resolveSpecifier(file, s.value);
		if (target === undefined) {
			continue;
		}
		const moved = typeof target === 'object';
		const to = moved ? target.movedTo : newPath(target);
		if (!moved && !moves.has(file) && !moves.has(target)) {
			continue;
		}
		const spec = specifierFor(newPath(file), to, s.value);
		if (spec !== s.value) {
			edits.push({ ...s, spec });
		}
	}
	if (edits.length > 0) {
		let out = text;
		for (const e of edits.sort((a, b) => b.start - a.start)) {
			out = out.slice(0, e.start) + e.spec + out.slice(e.end);
		}
		rewritten.set(newPath(file), out);
		specifierCount += edits.length;
	}
}

/** Repo-root paths of moved files named in text: `core/rules.ts`, `../core/protocol.ts`, `core/importers/`. */
const relativeToRoot = path =>
	posix.normalize(
		path
			.slice(root.length + 1)
			.split('\\')
			.join('/'),
	);
const escape = s => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const mentionRules = Object.entries(map).map(([from, to]) => ({
	re: new RegExp(`(?<![\\w.-]|[\\w-]/)${escape(from)}${from.endsWith('/') ? '' : '(?!\\w|\\.\\w)'}`, 'g'),
	to,
}));
// A file whose name changes (claimRules.ts -> rules/claim.ts) is often named bare in comments: that name,
// when no other file has it, becomes the new repo path.
const baseName = f => f.slice(f.lastIndexOf('/') + 1);
for (const [from, to] of Object.entries(map)) {
	const name = baseName(from);
	if (!from.endsWith('/') && name !== baseName(to) && !files.some(f => f !== from && baseName(f) === name)) {
		mentionRules.push({ re: new RegExp(`(?<![\\w./-])${escape(name)}(?!\\w|\\.\\w)`, 'g'), to });
	}
}
let mentionCount = 0;
const mentionFiles = new Set();
if (!flag('--no-mentions')) {
	const self = [relativeToRoot(mapFile), 'scripts/moveModules.mjs'];
	for (const file of files.filter(f => mentionExt.test(f) && !self.includes(f))) {
		const at = newPath(file);
		const text = rewritten.get(at) ?? readFileSync(join(root, file), 'utf8');
		let out = text;
		for (const { re, to } of mentionRules) {
			out = out.replace(re, () => {
				mentionCount++;
				return to;
			});
		}
		if (out !== text) {
			rewritten.set(at, out);
			mentionFiles.add(at);
		}
	}
}

for (const [from, to] of moves) {
	console.log(`move     ${from} -> ${to}`);
}
for (const file of [...rewritten.keys()].sort()) {
	console.log(`rewrite  ${file}${mentionFiles.has(file) ? ' (mentions)' : ''}`);
}
console.log(
	`moveModules: ${moves.size} files moved, ${specifierCount} specifiers and ${mentionCount} mentions rewritten in ${rewritten.size} files${dryRun ? ' (dry run: nothing written)' : ''}`,
);
if (dryRun) {
	process.exit(0);
}

const tracked = new Set(git('ls-files', '-z').split('\0'));
for (const [from, to] of moves) {
	mkdirSync(dirname(join(root, to)), { recursive: true });
	if (tracked.has(from)) {
		git('mv', from, to);
	} else {
		renameSync(join(root, from), join(root, to));
	}
}
// A folder the move emptied (core/importers/ after "core/importers/") goes too.
for (const from of moves.keys()) {
	for (
		let dir = dirname(join(root, from));
		dir.startsWith(root + '/') && existsSync(dir) && readdirSync(dir).length === 0;
		dir = dirname(dir)
	) {
		rmdirSync(dir);
	}
}
for (const [file, text] of rewritten) {
	const path = join(root, file);
	if (!statSync(path).isFile() || readFileSync(path, 'utf8') !== text) {
		writeFileSync(path, text);
	}
}
// A longer specifier can push an import past the line width: prettier lays out what was rewritten.
const formatted = [...rewritten.keys()].filter(f => sourceExt.test(f) || f.endsWith('.json'));
if (!flag('--no-format') && formatted.length > 0) {
	execFileSync(
		process.execPath,
		[join(root, 'node_modules/prettier/bin/prettier.cjs'), '--write', '--log-level', 'warn', ...formatted],
		{
			cwd: root,
			stdio: 'inherit',
		},
	);
}
