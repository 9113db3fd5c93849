/* Burns argv[1] seconds of CPU (default 0.2) and exits 0. */
#include <stdlib.h>
#include "burn.h"

int main(int argc, char **argv)
{
    burn(argc > 1 ? atof(argv[1]) : 0.2);
    return 0;
}
