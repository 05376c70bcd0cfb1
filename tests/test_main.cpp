// The one translation unit that builds Catch2's main(); every other test file
// includes <catch2/catch.hpp> only.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
