import { statfsSync } from 'node:fs';
import { dirname } from 'node:path';

/**
 * Linux file systems that only one running kernel mounts at a time (statfs's f_type): ext2/3/4, xfs,
 * btrfs, tmpfs, ramfs, overlay (a container's), zfs, f2fs, bcachefs. Not a network or shared one (nfs,
 * cifs, 9p, fuse, ceph...): two machines may write there at once.
 */
const LOCAL = new Set([0xef53, 0x58465342, 0x9123683e, 0x01021994, 0x858458f6, 0x794c7630, 0x2fc12fc1, 0xf2f52010, 0xca451a4e]);

/** True when `file`'s folder is on a disk of this machine alone; false where that cannot be told. */
export function onLocalDisk(file: string): boolean {
  try {
    return LOCAL.has(Number(statfsSync(dirname(file)).type));
  } catch {
    return false;
  }
}
