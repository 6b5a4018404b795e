import { createRequire } from 'node:module';

type Linkedom = typeof import('linkedom');

const require = createRequire(import.meta.url);
let loaded: Linkedom | undefined;

/**
 * linkedom, loaded on first use and synchronously. Why not a static import: on Node 20, linkedom's
 * ES module graph (css-select → domutils → domelementtype) being linked while sanitize-html
 * require()s the same ES modules (htmlparser2 → domelementtype) fails with
 * ERR_VM_MODULE_LINK_FAILURE ("request for 'domelementtype' is not in cache"). That happens
 * whenever several of our modules are imported at once, as the CLI's command discovery does.
 * By first use, sanitize-html has long finished loading.
 */
export function parseHTML(html: string): ReturnType<Linkedom['parseHTML']> {
  loaded ??= require('linkedom') as Linkedom;
  return loaded.parseHTML(html);
}
