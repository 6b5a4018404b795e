/**
 * What the host needs to know about an uploaded WebAssembly module before it runs it, and the one
 * change it makes to it. Extism caps only its own buffers (`memory.maxPages`), not the module's
 * linear memory, so a module declaring no maximum could grow to gigabytes: `capMemory` rewrites the
 * memory section so every memory has a maximum of at most `maxPages` 64 KiB pages (a module that
 * asks for more up front, imports its memory or uses 64-bit or shared memory is refused).
 */
export const WASM_PAGE_BYTES = 64 * 1024;

export interface ModuleInfo {
  /** The module with its memory capped: what is stored and run. */
  bytes: Uint8Array<ArrayBuffer>;
  exports: string[];
}

export class ModuleProblem extends Error {}

function readU32(bytes: Uint8Array, offset: number): { value: number; next: number } {
  let result = 0;
  let shift = 0;
  let pos = offset;
  for (;;) {
    if (pos >= bytes.length || shift > 28) throw new ModuleProblem('is not a valid WebAssembly module (bad LEB128)');
    const byte = bytes[pos++]!;
    result += (byte & 0x7f) * 2 ** shift;
    if ((byte & 0x80) === 0) break;
    shift += 7;
  }
  return { value: result, next: pos };
}

function writeU32(value: number): number[] {
  const out: number[] = [];
  let v = value;
  do {
    let byte = v & 0x7f;
    v = Math.floor(v / 128);
    if (v !== 0) byte |= 0x80;
    out.push(byte);
  } while (v !== 0);
  return out;
}

function readName(bytes: Uint8Array, offset: number): { next: number } {
  const len = readU32(bytes, offset);
  return { next: len.next + len.value };
}

/** Refuses imported memories: the plugin's memory must be its own, so its cap is ours to set. */
function checkImports(bytes: Uint8Array, start: number): void {
  let pos = start;
  const count = readU32(bytes, pos);
  pos = count.next;
  for (let i = 0; i < count.value; i++) {
    pos = readName(bytes, pos).next;
    pos = readName(bytes, pos).next;
    const kind = bytes[pos++];
    if (kind === 0x02) throw new ModuleProblem('imports its memory; a plugin must define its own');
    if (kind === 0x00) pos = readU32(bytes, pos).next;
    else if (kind === 0x01) { pos += 1; const flags = bytes[pos++]!; pos = readU32(bytes, pos).next; if (flags & 1) pos = readU32(bytes, pos).next; }
    else if (kind === 0x03) pos += 2;
    else if (kind === 0x04) pos = readU32(bytes, pos + 1).next;
    else throw new ModuleProblem('is not a valid WebAssembly module (unknown import kind)');
  }
}

function cappedMemorySection(bytes: Uint8Array, start: number, end: number, maxPages: number): number[] {
  let pos = start;
  const count = readU32(bytes, pos);
  pos = count.next;
  const out = writeU32(count.value);
  for (let i = 0; i < count.value; i++) {
    const flags = bytes[pos++]!;
    if (flags & ~0x01) throw new ModuleProblem('uses shared or 64-bit memory, which plugins may not');
    const min = readU32(bytes, pos);
    pos = min.next;
    let max = maxPages;
    if (flags & 0x01) {
      const declared = readU32(bytes, pos);
      pos = declared.next;
      max = Math.min(declared.value, maxPages);
    }
    if (min.value > maxPages) {
      throw new ModuleProblem(`asks for ${min.value} pages of memory at start; the limit is ${maxPages} (${(maxPages * WASM_PAGE_BYTES) / 2 ** 20} MiB)`);
    }
    out.push(0x01, ...writeU32(min.value), ...writeU32(Math.max(max, min.value)));
  }
  if (pos !== end) throw new ModuleProblem('is not a valid WebAssembly module (memory section)');
  return out;
}

/** Checks and caps a module: throws ModuleProblem naming what is wrong. */
export function inspectModule(input: Uint8Array, maxPages: number): ModuleInfo {
  const bytes = input;
  if (bytes.length < 8 || bytes[0] !== 0x00 || bytes[1] !== 0x61 || bytes[2] !== 0x73 || bytes[3] !== 0x6d) {
    throw new ModuleProblem('is not a WebAssembly module');
  }
  if (bytes[4] !== 1 || bytes[5] !== 0 || bytes[6] !== 0 || bytes[7] !== 0) throw new ModuleProblem('is not a WebAssembly 1.0 module');
  const parts: Uint8Array[] = [bytes.subarray(0, 8)];
  let pos = 8;
  let memories = 0;
  while (pos < bytes.length) {
    const id = bytes[pos]!;
    const size = readU32(bytes, pos + 1);
    const start = size.next;
    const end = start + size.value;
    if (end > bytes.length) throw new ModuleProblem('is not a valid WebAssembly module (truncated)');
    if (id === 2) checkImports(bytes, start);
    if (id === 5) {
      const body = cappedMemorySection(bytes, start, end, maxPages);
      memories += readU32(bytes, start).value;
      parts.push(Uint8Array.from([5, ...writeU32(body.length), ...body]));
    } else {
      parts.push(bytes.subarray(pos, end));
    }
    pos = end;
  }
  const total = parts.reduce((n, p) => n + p.length, 0);
  const out = new Uint8Array(total);
  let at = 0;
  for (const p of parts) { out.set(p, at); at += p.length; }
  let module: WebAssembly.Module;
  try {
    module = new WebAssembly.Module(out);
  } catch (error) {
    throw new ModuleProblem(`is not a valid WebAssembly module (${(error as Error).message.slice(0, 200)})`);
  }
  if (memories === 0 && WebAssembly.Module.exports(module).some((e) => e.kind === 'memory')) {
    throw new ModuleProblem('exports a memory it does not define');
  }
  const exports = WebAssembly.Module.exports(module).filter((e) => e.kind === 'function').map((e) => e.name);
  return { bytes: out, exports };
}
