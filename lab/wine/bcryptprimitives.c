/* bcryptprimitives.dll for Wine 8 (Debian bookworm): exports ProcessPrng, which Go >= 1.22's
 * runtime loads at start on Windows (runtime/os_windows.go: "bcryptprimitives.dll" /
 * "ProcessPrng"); Wine 8 has no such DLL. ProcessPrng fills the buffer and always returns TRUE
 * (learn.microsoft.com: "ProcessPrng function ... always returns TRUE"); here it is backed by
 * RtlGenRandom (advapi32 SystemFunction036), which Wine implements.
 * Built by lab/bin/lab-build with Debian's gcc-mingw-w64-x86-64:
 *   x86_64-w64-mingw32-gcc -shared -o bcryptprimitives.dll bcryptprimitives.c bcryptprimitives.def -ladvapi32 */
#include <windows.h>
#define SystemFunction036 NTAPI SystemFunction036
#include <ntsecapi.h>
#undef SystemFunction036

BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T len) {
    while (len > 0) {
        ULONG n = len > 0x10000000 ? 0x10000000 : (ULONG)len;
        if (!RtlGenRandom(data, n)) return FALSE;
        data += n;
        len -= n;
    }
    return TRUE;
}
