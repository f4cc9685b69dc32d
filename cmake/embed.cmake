# Writes OUT as a C array NAME holding the bytes of IN plus a NUL, so the library
# carries a file's exact text (include/gx/device.h, handed to NVRTC at run time; the
# lambda prelude's pieces, src/jit/prelude/*.h).
file(READ ${IN} hex HEX)
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
string(REGEX REPLACE "((0x..,){16})" "\\1\n" bytes "${bytes}")
file(WRITE ${OUT}.tmp "/* generated from ${IN} by cmake/embed.cmake */\nstatic const unsigned char ${NAME}[] = {\n${bytes}0x00};\n")
file(COPY_FILE ${OUT}.tmp ${OUT} ONLY_IF_DIFFERENT)
