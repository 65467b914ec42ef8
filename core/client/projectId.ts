/**
 * A project's id, pure: derived from a git repository's `origin` remote, normalised so
 * every clone of one repository agrees (`git@github.com:Acme/Web.git`, `https://github.com/acme/web`
 * and `ssh://git@github.com:22/acme/web.git` are all `github.com/acme/web`), with credentials, ports,
 * `.git` and trailing slashes dropped; without a usable remote, the repository root's folder name.
 * Reads nothing: finding the repository and its remote is core/client/gitRepo.ts's.
 */

/** The longest project id Baton stores (a host and a path of a few levels fit easily). */
export const projectIdLength = 200;

/** `github.com/acme/web` from any spelling of a remote URL, or undefined when it names no repository. */
export function projectIdFromRemote(url: string): string | undefined {
	const trimmed = url.trim();
	if (trimmed === '') {
		return undefined;
	}
	let host: string;
	let path: string;
	// scp-like: [user@]host:path (no scheme, a colon before any slash)
	const scp = /^(?:[^@/\s]+@)?([^:/\s]+):(?!\/\/)(.+)$/.exec(trimmed);
	if (!trimmed.includes('://') && scp !== null) {
		host = scp[1] ?? '';
		path = scp[2] ?? '';
	} else {
		let parsed: URL;
		try {
			parsed = new URL(trimmed);
		} catch {
			return undefined;
		}
		if (parsed.protocol === 'file:' || parsed.hostname === '') {
			return undefined; // a local remote names a folder, not a shared repository
		}
		host = parsed.hostname;
		path = decodeURIComponent(parsed.pathname);
	}
	const segments = path
		.split('/')
		.filter(s => s !== '' && s !== '.' && s !== '..')
		.map(s => s.toLowerCase());
	const last = segments.length - 1;
	if (last < 0) {
		return undefined;
	}
	segments[last] = (segments[last] ?? '').replace(/\.git$/, '');
	if (segments[last] === '') {
		segments.pop();
	}
	if (segments.length === 0) {
		return undefined;
	}
	const id = [host.toLowerCase(), ...segments].join('/');
	return id.length <= projectIdLength ? id : id.slice(0, projectIdLength);
}

/** A repository without a usable remote is known by its root folder's name. */
export function projectIdFromFolder(rootPath: string): string {
	const name =
		rootPath
			.replace(/[\\/]+$/, '')
			.split(/[\\/]/)
			.pop() ?? '';
	return (name === '' ? 'root' : name).slice(0, projectIdLength);
}
