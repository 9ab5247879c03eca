/** A typed array constructor that can view a SharedArrayBuffer. */
interface SharedArrayConstructor<T> {
  new (buffer: SharedArrayBuffer): T;
  readonly BYTES_PER_ELEMENT: number;
}

/**
 * A zeroed typed array on a SharedArrayBuffer: posted to a worker thread it is shared, not copied, so the
 * threads of one kNN pass read one copy of a space (parallel-knn-lists.ts). Reads and writes cost what they
 * cost on an ArrayBuffer.
 */
export function sharedArray<T>(type: SharedArrayConstructor<T>, length: number): T {
  return new type(new SharedArrayBuffer(length * type.BYTES_PER_ELEMENT));
}

/** `values` copied onto a SharedArrayBuffer (see sharedArray). */
export function sharedCopy<T extends { set(values: ArrayLike<number>): void }>(
  type: SharedArrayConstructor<T>,
  values: ArrayLike<number>,
): T {
  const copy = sharedArray(type, values.length);
  copy.set(values);
  return copy;
}

/** `array` itself when it already lies on a SharedArrayBuffer, else a shared copy of it. */
export function shared<T extends Uint32Array | Float32Array>(type: SharedArrayConstructor<T>, array: T): T {
  return array.buffer instanceof SharedArrayBuffer ? array : sharedCopy(type, array);
}
